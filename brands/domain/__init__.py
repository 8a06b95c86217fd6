"""The brands domain's pure rules: no I/O, no models (name matching, the ad-spend simulator)."""

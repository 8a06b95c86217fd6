"""The assistant's vocabulary: the image models on offer, the free tools' objectives, channels and tones."""

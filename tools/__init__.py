"""Code that starts the project's real servers and drives them from outside, as a user or an operator does:
shared by the on-demand scripts (scripts/soak.py, scripts/multinode.py) and the outside-in tests, which
import it from here. Nothing in the product imports it (tests/test_architecture.py), and it imports no
test module."""

"""Constants other modules and tests take at import."""
FACTOR = 2
EPS = 1e-6

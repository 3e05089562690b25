# The module global the pair shares.
value = "clean"

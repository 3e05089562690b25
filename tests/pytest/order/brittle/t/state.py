value = None

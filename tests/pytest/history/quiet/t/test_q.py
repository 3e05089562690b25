# One quick test a run: 60 runs, 4 at a time, share one state folder.
def test_quick():
    pass

# A quarantine entry's glob covers both: one fails, one passes.
def test_q_broken():
    assert False, "broken on this machine"


def test_q_fine():
    pass

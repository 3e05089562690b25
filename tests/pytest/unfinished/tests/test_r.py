import os, time, pytest
def test_a_fails(): assert False
def test_b_hangs_on_first_attempt():
    if os.environ.get("TPUCI_ATTEMPT") == "1": time.sleep(300)
def test_c_after_the_hang(): pass
@pytest.mark.xfail(reason="non-strict")
def test_d_xpass(): pass

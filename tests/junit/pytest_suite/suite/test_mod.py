import sys

import pytest


def test_pass():
    assert 1 + 1 == 2


def test_fail():
    x = 1
    print("some captured output")
    assert x == 2, "x should be 2"


def test_error_in_fixture(broken_db):
    pass


def test_skip():
    pytest.skip("not on this platform")


@pytest.mark.skipif(True, reason="never here")
def test_skipif():
    pass


@pytest.mark.xfail(reason="known bug #12")
def test_xfail():
    assert False


@pytest.mark.xfail(reason="fixed upstream", strict=True)
def test_xpass_strict():
    pass


@pytest.mark.xfail(reason="maybe fixed")
def test_xpass():
    pass


@pytest.mark.parametrize("n,s", [(1, "a"), (2, "b/c"), (3, "x::y"), (4, "<&>\"")])
def test_param(n, s):
    assert n != 3


def test_call_fail_and_teardown_error(bad_teardown):
    assert bad_teardown == 2


def test_pass_and_teardown_error(bad_teardown):
    assert bad_teardown == 1


def test_unicode_ünï():
    sys.stderr.write("stderr with a control char \x1b[31m and é\n")
    assert "é" == "e"


class TestCls:
    def test_method(self):
        assert True

    @pytest.mark.parametrize("v", [0.5, 1.5])
    def test_values(self, v):
        assert v < 1

    class TestInner:
        def test_nested(self):
            assert True

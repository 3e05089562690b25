# pytest.test_timeout: the first test takes longer than the limit and
# fails with its stacks; pytest goes on with the next one.
import time


def test_over_the_limit():
    time.sleep(60)


def test_after_it():
    pass

def test_deep():
    assert [1, 2, 3] == [1, 2, 3]


class TestDeep:
    def test_long_message(self):
        assert "a" * 300 == "b" * 300

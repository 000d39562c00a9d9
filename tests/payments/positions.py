"""Records built by hand from the positions the standard prints."""


def by_positions(*fields: tuple[int, int, str]) -> str:
    """A record from (start, end, text) as the standard numbers its positions (1-based,
    inclusive): each text must fill its positions exactly, and the fields must tile 1-94. The
    line is built from the layout printed in the standard, not from the code's."""
    line = ""
    for start, end, text in fields:
        assert start == len(line) + 1, (start, len(line) + 1)
        assert len(text) == end - start + 1, (start, end, text)
        line += text
    assert len(line) == 94
    return line

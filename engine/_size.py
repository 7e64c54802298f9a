"""``torch.Size``: a tuple of ints."""


class Size(tuple):
    def __new__(cls, dims=()):
        return super().__new__(cls, (int(d) for d in dims))

    def __repr__(self):
        return f"torch.Size([{', '.join(map(str, self))}])"

    def numel(self) -> int:
        n = 1
        for d in self:
            n *= d
        return n

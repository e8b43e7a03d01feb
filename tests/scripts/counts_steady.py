"""The same work in every run, with the call shapes whose counts the profilers name
differently: a generator (resumed at another line), a module's forward, a
comprehension, recursion and a method."""

import torch


def batches(n: int):  # type: ignore[no-untyped-def]
    for _ in range(n):
        yield torch.ones(4)


class Net(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = torch.nn.Linear(4, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(x).relu()


def depth(n: int) -> int:
    return 0 if n == 0 else 1 + depth(n - 1)


net = Net()
total = 0.0
for batch in batches(12):
    total += float(net(batch).sum())
squares = [torch.full((2,), float(v)) for v in range(depth(5))]
print(round(total, 3), len(squares))

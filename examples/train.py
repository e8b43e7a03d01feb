"""A small training loop with one expensive line, for `make demo`.

Run it bare with `python examples/train.py --steps 50`; profile it with
`bottleneck-lsp profile examples/train.py --steps 50`. On a GPU: `--device cuda`.
"""

import argparse

import torch
from torch import nn


class Model(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.encoder = nn.Linear(64, width)
        self.mixer = nn.Parameter(torch.randn(width, width) / width**0.5)
        self.head = nn.Linear(width, 1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.encoder(x))
        for _ in range(4):
            h = torch.tanh(h @ self.mixer)  # the planted hotspot: 4 big matmuls per step
        return self.head(h)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=40)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    args = parser.parse_args()

    torch.manual_seed(0)
    model = Model(args.width).to(args.device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    inputs = torch.randn(256, 64, device=args.device)
    targets = torch.randn(256, 1, device=args.device)
    for step in range(args.steps):
        optimizer.zero_grad()
        loss = nn.functional.mse_loss(model(inputs), targets)
        loss.backward()
        optimizer.step()
        if step % 10 == 0:
            print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

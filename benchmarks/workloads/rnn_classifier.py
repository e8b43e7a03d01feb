"""A character-level RNN classifier stepped one character at a time in Python, in the spirit
of the PyTorch tutorial's name classifier: many small ops per sample."""

import torch
from torch import nn

torch.manual_seed(0)
letters, classes, hidden = 57, 18, 128
names = [torch.randint(0, letters, (int(n),)) for n in torch.randint(3, 12, (1200,))]
labels = torch.randint(0, classes, (1200,))


class RNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.i2h = nn.Linear(letters + hidden, hidden)
        self.h2o = nn.Linear(hidden, classes)

    def forward(self, letter: torch.Tensor, h: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h = torch.tanh(self.i2h(torch.cat((letter, h), 1)))
        return torch.log_softmax(self.h2o(h), dim=1), h


model = RNN()
optimizer = torch.optim.SGD(model.parameters(), lr=0.005)
criterion = nn.NLLLoss()
eye = torch.eye(letters)
for epoch in range(1):
    total = 0.0
    for name, label in zip(names, labels, strict=True):
        h = torch.zeros(1, hidden)
        for index in name:
            out, h = model(eye[index].unsqueeze(0), h)
        loss = criterion(out, label.unsqueeze(0))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        total += loss.item()
    print(f"epoch {epoch}: {total / len(names):.3f}")

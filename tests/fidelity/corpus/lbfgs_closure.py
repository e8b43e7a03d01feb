"""LBFGS calls the closure inside its step (torch's Optimizer.step#LBFGS.step range): the
forward and backward lines inside the closure keep their time, the step line only its own.

Random-feature regression: a frozen projection, then a trained linear layer. The forward
line holds about three times the backward line's work (two matrix products against one),
so the two are never a tie. The build line makes torch import its compiler stack (about a
second here, more on a busy machine): sixteen steps keep the forward line clearly first
(eight left it 8 points ahead, and one CI run in three showed the build line first)."""
import torch

torch.manual_seed(0)
x = torch.randn(4000, 512)
proj = torch.randn(512, 512) / 512**0.5
y = torch.randn(4000, 256)
w = torch.zeros(512, 256, requires_grad=True)
opt = torch.optim.LBFGS([w], lr=0.1, max_iter=4, history_size=4)  # PLANT:build


def closure():
    opt.zero_grad()
    loss = ((torch.tanh(x @ proj) @ w - y) ** 2).mean()  # PLANT:forward
    loss.backward()  # PLANT:backward
    return loss


for _ in range(16):
    opt.step(closure)

"""LBFGS calls the closure inside its step (torch's Optimizer.step#LBFGS.step range): the
forward and backward lines inside the closure keep their time, the step line only its own."""
import torch

torch.manual_seed(0)
x = torch.randn(20000, 1000)
y = torch.randn(20000, 1)
w = torch.zeros(1000, 1, requires_grad=True)
opt = torch.optim.LBFGS([w], lr=0.1, max_iter=4, history_size=4)


def closure():
    opt.zero_grad()
    loss = ((x @ w - y) ** 2).mean()  # PLANT:forward
    loss.backward()  # PLANT:backward
    return loss


for _ in range(8):
    opt.step(closure)

import torch

x = torch.randn(200, 200)
y = x @ x
print("looping", flush=True)
while True:
    y = x @ x  # HOT

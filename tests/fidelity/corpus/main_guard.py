import torch

x = torch.randn(400, 400)

if __name__ == "__main__":
    for _ in range(200):
        y = torch.sigmoid(x @ x)  # PLANT:main

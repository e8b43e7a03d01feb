"""A variational autoencoder on generated 28x28 images, in the spirit of pytorch/examples'
vae: a DataLoader over an in-memory dataset, an MLP encoder and decoder, Adam."""

import torch
from torch import nn
from torch.nn import functional
from torch.utils.data import DataLoader, TensorDataset

torch.manual_seed(0)
images = torch.rand(4096, 1, 28, 28)
loader = DataLoader(TensorDataset(images), batch_size=128, shuffle=True)


class VAE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(784, 400)
        self.fc21 = nn.Linear(400, 20)
        self.fc22 = nn.Linear(400, 20)
        self.fc3 = nn.Linear(20, 400)
        self.fc4 = nn.Linear(400, 784)

    def encode(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        h1 = functional.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu: torch.Tensor, logvar: torch.Tensor) -> torch.Tensor:
        std = torch.exp(0.5 * logvar)
        return mu + torch.randn_like(std) * std

    def decode(self, z: torch.Tensor) -> torch.Tensor:
        return torch.sigmoid(self.fc4(functional.relu(self.fc3(z))))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        mu, logvar = self.encode(x.view(-1, 784))
        return self.decode(self.reparameterize(mu, logvar)), mu, logvar


model = VAE()
optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
for epoch in range(3):
    total = 0.0
    for (batch,) in loader:
        optimizer.zero_grad()
        recon, mu, logvar = model(batch)
        bce = functional.binary_cross_entropy(recon, batch.view(-1, 784), reduction="sum")
        kld = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        loss = bce + kld
        loss.backward()
        total += loss.item()
        optimizer.step()
    print(f"epoch {epoch}: {total / len(images):.2f}")

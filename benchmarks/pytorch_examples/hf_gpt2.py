"""A tiny GPT-2 from Hugging Face transformers, trained from scratch on random tokens (no
download): a check of line attribution through a deep third-party library
(docs/pytorch-examples.md, "A transformers model"). Needs `pip install transformers`."""

import argparse

import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import GPT2Config, GPT2LMHeadModel

parser = argparse.ArgumentParser()
parser.add_argument("--steps", type=int, default=30)
args = parser.parse_args()

torch.manual_seed(0)
config = GPT2Config(vocab_size=5000, n_positions=128, n_embd=128, n_layer=2, n_head=4)
model = GPT2LMHeadModel(config)
data = TensorDataset(torch.randint(0, 5000, (args.steps * 8, 128)))
loader = DataLoader(data, batch_size=8, shuffle=True)
optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)

model.train()
for step, (ids,) in enumerate(loader):
    out = model(input_ids=ids, labels=ids)
    out.loss.backward()
    optimizer.step()
    optimizer.zero_grad()
    if step % 10 == 0:
        print(f"step {step} loss {out.loss.item():.3f}")

"""A word-level LSTM language model on a generated corpus, in the spirit of pytorch/examples'
word_language_model: embedding, two-layer LSTM, truncated backpropagation, gradient clipping."""

import torch
from torch import nn

torch.manual_seed(0)
vocab, seq_len, batch = 2000, 35, 20
corpus = torch.randint(0, vocab, (batch, 40 * seq_len + 1))


class LM(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, 128)
        self.lstm = nn.LSTM(128, 128, num_layers=2, batch_first=True, dropout=0.2)
        self.out = nn.Linear(128, vocab)

    def forward(self, x: torch.Tensor, state: tuple[torch.Tensor, torch.Tensor] | None):
        h, state = self.lstm(self.embed(x), state)
        return self.out(h), state


model = LM()
optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
criterion = nn.CrossEntropyLoss()
for epoch in range(2):
    state = None
    for i in range(0, corpus.size(1) - 1, seq_len):
        x, y = corpus[:, i : i + seq_len], corpus[:, i + 1 : i + 1 + seq_len]
        if state is not None:
            state = tuple(s.detach() for s in state)
        logits, state = model(x, state)
        loss = criterion(logits.reshape(-1, vocab), y.reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 0.25)
        optimizer.step()
    print(f"epoch {epoch}: {loss.item():.3f}")

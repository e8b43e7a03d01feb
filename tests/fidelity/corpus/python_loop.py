def slow(n):
    return sum([i * i for i in range(n)])  # PLANT:loop


def fast():
    return sum(range(1000))


for _ in range(3):
    slow(700_000)
fast()

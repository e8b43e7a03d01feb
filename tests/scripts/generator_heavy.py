def squares(n):
    return sum(i * i for i in range(n))  # HOT: a generator, resumed once per item


print(squares(600_000))

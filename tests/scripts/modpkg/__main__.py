print("INTROSPECT {\"main\": true}")

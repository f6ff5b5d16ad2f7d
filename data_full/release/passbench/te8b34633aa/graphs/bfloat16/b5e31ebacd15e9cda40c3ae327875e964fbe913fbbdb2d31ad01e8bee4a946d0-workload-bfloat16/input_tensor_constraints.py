dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 12, 8, 64, 512], 'in_0'),
    ([8, 12, 768, 768], 'in_1'),
]

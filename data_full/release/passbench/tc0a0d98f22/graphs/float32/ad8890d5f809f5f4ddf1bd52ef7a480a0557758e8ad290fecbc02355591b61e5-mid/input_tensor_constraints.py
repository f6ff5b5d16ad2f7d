dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 1, 4, 16], 'in_0'),
    ([8, 16], 'w_0'),
    ([8], 'w_1'),
]

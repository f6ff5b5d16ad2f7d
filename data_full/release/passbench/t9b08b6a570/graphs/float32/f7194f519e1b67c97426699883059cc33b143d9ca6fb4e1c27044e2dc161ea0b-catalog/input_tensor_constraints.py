dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 256, 64, 64], 'in_0'),
    ([17, 256, 1, 1], 'w_0'),
    ([17], 'w_1'),
]

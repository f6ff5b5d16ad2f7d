dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 128, 14, 14], 'in_0'),
    ([128, 128, 3, 3], 'w_0'),
    ([1, 384, 14, 14], 'in_1'),
]

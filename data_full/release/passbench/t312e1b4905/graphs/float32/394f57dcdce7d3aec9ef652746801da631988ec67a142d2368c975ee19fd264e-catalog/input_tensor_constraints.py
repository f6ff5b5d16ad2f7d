dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1536, 14, 14], 'in_0'),
    ([3072, 1536, 1, 1], 'in_1'),
    ([3072], 'w_0'),
]

dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 3, 256, 256], 'in_0'),
    ([192, 3, 16, 16], 'w_0'),
    ([192], 'w_1'),
    ([1, 1, 192], 'in_1'),
    ([1, 4, 192], 'in_2'),
]

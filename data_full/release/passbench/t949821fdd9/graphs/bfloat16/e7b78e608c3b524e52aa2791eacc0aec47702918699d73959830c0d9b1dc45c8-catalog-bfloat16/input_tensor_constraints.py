dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1, 4, 4], 'in_0'),
    ([2, 4], 'w_0'),
    ([2], 'w_1'),
    ([1, 1, 4, 8], 'in_1'),
]

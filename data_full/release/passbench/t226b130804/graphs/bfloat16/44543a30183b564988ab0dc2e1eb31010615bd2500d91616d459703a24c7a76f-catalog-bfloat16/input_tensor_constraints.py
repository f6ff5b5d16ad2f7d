dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 2048], 'in_0'),
    ([68, 2048], 'w_0'),
    ([68], 'w_1'),
]

dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1024, 14, 14], 'in_0'),
    ([512, 1024, 1, 1], 'w_0'),
    ([1, 512, 14, 14], 'in_1'),
]

dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1024, 16, 16], 'in_0'),
    ([1024, 8, 3, 3], 'w_0'),
    ([1, 1024, 1, 1], 'in_1'),
]

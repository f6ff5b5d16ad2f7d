dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 1280, 96, 96], 'in_0'),
    ([1280, 1, 3, 3], 'w_0'),
    ([1280], 'w_1'),
]

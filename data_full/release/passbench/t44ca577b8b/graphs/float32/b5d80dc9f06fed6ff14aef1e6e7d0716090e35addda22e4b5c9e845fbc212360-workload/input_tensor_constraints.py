dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 512, 28, 28], 'in_0'),
    ([104, 512, 1, 1], 'w_0'),
    ([104], 'w_1'),
    ([8, 104, 1, 1], 'in_1'),
    ([8, 128, 28, 28], 'in_2'),
]

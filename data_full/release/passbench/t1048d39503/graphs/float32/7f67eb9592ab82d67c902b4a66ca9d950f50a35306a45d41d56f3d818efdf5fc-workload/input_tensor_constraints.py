dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 8, 1, 64], 'in_0'),
    ([8, 8, 35, 64], 'in_1'),
    ([8, 8, 35, 64], 'in_2'),
    ([8, 1, 1, 35], 'in_3'),
]

dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 28, 28, 28], 'in_0'),
    ([168, 28, 1, 1], 'w_0'),
    ([8, 168, 28, 28], 'in_1'),
    ([336], 'w_1'),
    ([336], 'w_2'),
    ([336], 'w_3'),
    ([336], 'w_4'),
]

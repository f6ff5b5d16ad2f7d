dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 64, 80, 80], 'in_0'),
    ([64, 64, 1, 1], 'w_0'),
    ([64], 'w_1'),
    ([1, 80, 80, 80], 'in_1'),
    ([1, 144, 1600], 'in_2'),
    ([1, 144, 400], 'in_3'),
    ([1, 144, 100], 'in_4'),
]

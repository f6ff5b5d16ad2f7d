dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 16, 1, 64], 'in_0'),
    ([1, 16, 1, 64], 'in_1'),
    ([1, 16, 1, 64], 'in_2'),
    ([1, 1, 1, 1], 'in_3'),
]

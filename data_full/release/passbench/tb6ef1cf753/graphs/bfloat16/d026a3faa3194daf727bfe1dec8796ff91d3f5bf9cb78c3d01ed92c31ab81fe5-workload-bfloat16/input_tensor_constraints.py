dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 256, 10, 10], 'in_0'),
    ([15, 256, 1, 1], 'w_0'),
    ([15], 'w_1'),
    ([8, 1500, 1], 'in_1'),
    ([8, 375, 1], 'in_2'),
]

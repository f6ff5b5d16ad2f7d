dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 64, 56, 56], 'in_0'),
    ([256, 64, 1, 1], 'w_0'),
    ([256], 'w_1'),
    ([256], 'w_2'),
    ([256], 'w_3'),
    ([256], 'w_4'),
]

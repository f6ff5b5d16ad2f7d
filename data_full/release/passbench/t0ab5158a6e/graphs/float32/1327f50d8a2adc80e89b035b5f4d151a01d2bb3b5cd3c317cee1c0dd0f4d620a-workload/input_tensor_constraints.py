dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([8, 640, 14, 14], 'in_0'),
    ([640, 1, 1, 1], 'w_0'),
    ([640], 'w_1'),
    ([640], 'w_2'),
    ([640], 'w_3'),
    ([640], 'w_4'),
]

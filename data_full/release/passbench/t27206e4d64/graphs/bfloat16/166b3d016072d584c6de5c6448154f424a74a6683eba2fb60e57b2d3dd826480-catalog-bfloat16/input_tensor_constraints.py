dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 288, 56, 56], 'in_0'),
    ([96, 288, 1, 1], 'w_0'),
    ([96], 'w_1'),
    ([1, 96, 56, 56], 'in_1'),
]

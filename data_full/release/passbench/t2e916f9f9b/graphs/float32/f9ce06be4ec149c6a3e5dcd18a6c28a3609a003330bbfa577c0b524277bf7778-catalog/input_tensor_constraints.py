dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 12, 56, 56], 'in_0'),
    ([12, 1, 3, 3], 'w_0'),
    ([12], 'w_1'),
    ([1, 60, 56, 56], 'in_1'),
    ([1, 12, 56, 56], 'in_2'),
    ([1, 12, 56, 56], 'in_3'),
    ([96], 'w_2'),
    ([96], 'w_3'),
    ([96], 'w_4'),
    ([96], 'w_5'),
]

dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 768, 112, 112], 'in_0'),
    ([768, 1, 3, 3], 'w_0'),
    ([768], 'w_1'),
    ([768], 'w_2'),
    ([768], 'w_3'),
    ([768], 'w_4'),
]

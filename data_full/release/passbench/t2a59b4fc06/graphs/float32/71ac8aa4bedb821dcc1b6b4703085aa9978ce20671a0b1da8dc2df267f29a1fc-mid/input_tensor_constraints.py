dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([4, 1344, 40, 40], 'in_0'),
    ([1344, 1, 5, 5], 'w_0'),
    ([1344], 'w_1'),
    ([1344], 'w_2'),
    ([1344], 'w_3'),
    ([1344], 'w_4'),
]

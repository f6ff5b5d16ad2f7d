dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 3, 224, 224], 'in_0'),
    ([128, 3, 4, 4], 'w_0'),
    ([128], 'w_1'),
    ([128], 'w_2'),
    ([128], 'w_3'),
    ([128], 'w_4'),
]

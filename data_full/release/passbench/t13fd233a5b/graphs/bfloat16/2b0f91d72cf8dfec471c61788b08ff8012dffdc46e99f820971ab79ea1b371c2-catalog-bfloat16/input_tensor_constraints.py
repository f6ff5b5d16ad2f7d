dynamic_dim_constraint_symbols = []

dynamic_dim_constraint_symbol2example_value = {}

dynamic_dim_constraint_relations = []

dynamic_dim_constraint_input_shapes = [
    ([1, 64, 56, 56], 'in_0'),
    ([156, 64, 1, 1], 'w_0'),
    ([156], 'w_1'),
    ([156], 'w_2'),
    ([156], 'w_3'),
    ([156], 'w_4'),
]

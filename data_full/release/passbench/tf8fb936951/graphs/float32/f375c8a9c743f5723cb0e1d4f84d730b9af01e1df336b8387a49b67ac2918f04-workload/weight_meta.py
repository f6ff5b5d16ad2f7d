class Program_weight_tensor_meta_in_0:
    name = 'in_0'
    original_name = 'in0'
    shape = [8, 192, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_w_0:
    name = 'w_0'
    original_name = 'in1'
    shape = [48, 192, 3, 3]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_in_1:
    name = 'in_1'
    original_name = 'in2'
    shape = [8, 384, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_2:
    name = 'in_2'
    original_name = 'in3'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_3:
    name = 'in_3'
    original_name = 'in4'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_4:
    name = 'in_4'
    original_name = 'in5'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_5:
    name = 'in_5'
    original_name = 'in6'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_6:
    name = 'in_6'
    original_name = 'in7'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_7:
    name = 'in_7'
    original_name = 'in8'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_8:
    name = 'in_8'
    original_name = 'in9'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_9:
    name = 'in_9'
    original_name = 'in10'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_10:
    name = 'in_10'
    original_name = 'in11'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_11:
    name = 'in_11'
    original_name = 'in12'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_12:
    name = 'in_12'
    original_name = 'in13'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_13:
    name = 'in_13'
    original_name = 'in14'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_14:
    name = 'in_14'
    original_name = 'in15'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_15:
    name = 'in_15'
    original_name = 'in16'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_16:
    name = 'in_16'
    original_name = 'in17'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_17:
    name = 'in_17'
    original_name = 'in18'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_18:
    name = 'in_18'
    original_name = 'in19'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_19:
    name = 'in_19'
    original_name = 'in20'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_20:
    name = 'in_20'
    original_name = 'in21'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_21:
    name = 'in_21'
    original_name = 'in22'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_22:
    name = 'in_22'
    original_name = 'in23'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_23:
    name = 'in_23'
    original_name = 'in24'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_24:
    name = 'in_24'
    original_name = 'in25'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_25:
    name = 'in_25'
    original_name = 'in26'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_26:
    name = 'in_26'
    original_name = 'in27'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_27:
    name = 'in_27'
    original_name = 'in28'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_28:
    name = 'in_28'
    original_name = 'in29'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_29:
    name = 'in_29'
    original_name = 'in30'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_30:
    name = 'in_30'
    original_name = 'in31'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_31:
    name = 'in_31'
    original_name = 'in32'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_32:
    name = 'in_32'
    original_name = 'in33'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_33:
    name = 'in_33'
    original_name = 'in34'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_34:
    name = 'in_34'
    original_name = 'in35'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_35:
    name = 'in_35'
    original_name = 'in36'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_36:
    name = 'in_36'
    original_name = 'in37'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_37:
    name = 'in_37'
    original_name = 'in38'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_38:
    name = 'in_38'
    original_name = 'in39'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_39:
    name = 'in_39'
    original_name = 'in40'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_40:
    name = 'in_40'
    original_name = 'in41'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_41:
    name = 'in_41'
    original_name = 'in42'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_42:
    name = 'in_42'
    original_name = 'in43'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_43:
    name = 'in_43'
    original_name = 'in44'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_44:
    name = 'in_44'
    original_name = 'in45'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_45:
    name = 'in_45'
    original_name = 'in46'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_46:
    name = 'in_46'
    original_name = 'in47'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_47:
    name = 'in_47'
    original_name = 'in48'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_48:
    name = 'in_48'
    original_name = 'in49'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_49:
    name = 'in_49'
    original_name = 'in50'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_50:
    name = 'in_50'
    original_name = 'in51'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_51:
    name = 'in_51'
    original_name = 'in52'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_52:
    name = 'in_52'
    original_name = 'in53'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_53:
    name = 'in_53'
    original_name = 'in54'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_54:
    name = 'in_54'
    original_name = 'in55'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_55:
    name = 'in_55'
    original_name = 'in56'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_56:
    name = 'in_56'
    original_name = 'in57'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_57:
    name = 'in_57'
    original_name = 'in58'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_58:
    name = 'in_58'
    original_name = 'in59'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_59:
    name = 'in_59'
    original_name = 'in60'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_60:
    name = 'in_60'
    original_name = 'in61'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_61:
    name = 'in_61'
    original_name = 'in62'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_62:
    name = 'in_62'
    original_name = 'in63'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_63:
    name = 'in_63'
    original_name = 'in64'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_in_64:
    name = 'in_64'
    original_name = 'in65'
    shape = [8, 48, 14, 14]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 1.0
    min_val = None
    max_val = None
    data = None
    kind = 'input'


class Program_weight_tensor_meta_w_1:
    name = 'w_1'
    original_name = 'in66'
    shape = [3456]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 1.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'buffer'


class Program_weight_tensor_meta_w_2:
    name = 'w_2'
    original_name = 'in67'
    shape = [3456]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 1.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'buffer'


class Program_weight_tensor_meta_w_3:
    name = 'w_3'
    original_name = 'in68'
    shape = [3456]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'


class Program_weight_tensor_meta_w_4:
    name = 'w_4'
    original_name = 'in69'
    shape = [3456]
    dtype = 'torch.float32'
    device = 'cpu'
    mean = 0.0
    std = 0.02
    min_val = None
    max_val = None
    data = None
    kind = 'parameter'

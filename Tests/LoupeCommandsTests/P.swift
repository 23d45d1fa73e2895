enum _TLoupeCommandsTests {}

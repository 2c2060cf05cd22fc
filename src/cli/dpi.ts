console.log('dpi');
